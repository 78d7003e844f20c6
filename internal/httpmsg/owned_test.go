package httpmsg

import "testing"

func TestAppendOwned(t *testing.T) {
	for _, tc := range []struct {
		name, out, b, batch string
		kept                bool // b itself became the batch
	}{
		{name: "empty batch takes b", out: "", b: "body", batch: "body", kept: true},
		{name: "non-empty batch appends", out: "head", b: "body", batch: "headbody"},
		{name: "empty b on empty batch", out: "", b: "", batch: "", kept: true},
	} {
		out := make([]byte, len(tc.out), 64)
		copy(out, tc.out)
		b := append(make([]byte, 0, 32), tc.b...)
		batch, spare := AppendOwned(out, b)
		if string(batch) != tc.batch || len(spare) != 0 {
			t.Errorf("%s: batch %q spare len %d", tc.name, batch, len(spare))
		}
		if gotKept := cap(batch) == 32; gotKept != tc.kept {
			t.Errorf("%s: b kept %v, want %v", tc.name, gotKept, tc.kept)
		}
		// The caller's buffer is the other one: never the batch's.
		if cap(spare) > 0 && cap(batch) > 0 && &spare[:1][0] == &batch[:1][0] {
			t.Errorf("%s: spare aliases the batch", tc.name)
		}
	}
}
