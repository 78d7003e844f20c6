package httprange

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		v    string
		size int64
		want []Range
		res  Result
	}{
		{v: "bytes=0-0", size: 10, want: []Range{{Start: 0, End: 1}}, res: OK},
		{v: "bytes=0-9", size: 10, want: []Range{{Start: 0, End: 10}}, res: OK},
		{v: "bytes=0-99", size: 10, want: []Range{{Start: 0, End: 10}}, res: OK},
		{v: "BYTES= 3-", size: 10, want: []Range{{Start: 3, End: 10}}, res: OK},
		{v: "bytes=-1", size: 10, want: []Range{{Start: 9, End: 10}}, res: OK},
		{v: "bytes=-10", size: 10, want: []Range{{Start: 0, End: 10}}, res: OK},
		{v: "bytes=1-2,4-5", size: 10, want: []Range{{Start: 1, End: 3}, {Start: 4, End: 6}}, res: OK},
		{v: "bytes=10-", size: 10, res: Unsatisfiable},
		{v: "bytes=-0", size: 10, res: Unsatisfiable},
		{v: "bytes=0-", size: 0, res: Unsatisfiable},
		{v: "bytes=-5", size: 0, res: Unsatisfiable},
		{v: "bytes=5-4", size: 10, res: Ignore},
		{v: "bytes=a-b", size: 10, res: Ignore},
		{v: "bytes=+1-2", size: 10, res: Ignore},
		{v: "bytes=-", size: 10, res: Ignore},
		{v: "bytes=", size: 10, res: Ignore},
		{v: "bytes=99999999999999999999-", size: 10, res: Ignore},
		{v: "pages=1-2", size: 10, res: Ignore},
	}
	for _, tt := range tests {
		got, res := Parse(tt.v, tt.size)
		if res != tt.res || (res == OK && !slices.Equal(got, tt.want)) {
			t.Errorf("Parse(%q, %d) = %v, %v; want %v, %v", tt.v, tt.size, got, res, tt.want, tt.res)
		}
	}
}
