package cli

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
)

func TestParseDefaults(t *testing.T) {
	t.Setenv(ExcludeEnv, "")
	c, err := Parse(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Frameworks) != len(catalog.Frameworks) || len(c.Scenarios) != len(catalog.Scenarios) || len(c.Protocols) != 2 {
		t.Fatalf("defaults: %d frameworks, %d scenarios, %d protocols", len(c.Frameworks), len(c.Scenarios), len(c.Protocols))
	}
	if c.Mode != "rampup" || c.Rampup.Start != 4 || c.Rampup.Step != 4 || c.Rampup.Interval != 100*time.Millisecond ||
		c.Rampup.P95Limit != 150*time.Millisecond || c.Rampup.MaxDuration != 15*time.Second {
		t.Fatalf("rampup defaults: %s %+v", c.Mode, c.Rampup)
	}
	if fmt.Sprint(c.WSConns) != "[1 100 10000]" || c.WSIdleConns != 10000 {
		t.Fatalf("ws defaults: %v, idle %d", c.WSConns, c.WSIdleConns)
	}
	if c.ServerProcs != 1 || c.Warmup != time.Second || c.Rounds != 1 {
		t.Fatalf("defaults: procs %d warmup %v rounds %d", c.ServerProcs, c.Warmup, c.Rounds)
	}
}

func TestParseLists(t *testing.T) {
	t.Setenv(ExcludeEnv, "celeris-inline")
	c, err := Parse(strings.Fields("-frameworks fiber,celeris,all -scenarios json -protocols h2c -exclude gin,chi"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range c.Frameworks {
		got = append(got, f.Name)
	}
	// Catalog order, no repeats, the flag's exclusions (it replaces the env's).
	if want := "celeris,celeris-inline,celeris-workers,celeris-std,celeris-std-inline,nethttp,echo,fasthttp,fiber,quicgo,celeris-blocking,gorilla,coder,gobwas,fasthttp-ws"; strings.Join(got, ",") != want {
		t.Fatalf("frameworks = %v, want %s", got, want)
	}
	if c.Scenarios[0].Path != "/json" || len(c.Scenarios) != 1 || c.Protocols[0] != "h2c" {
		t.Fatalf("scenarios %+v protocols %v", c.Scenarios, c.Protocols)
	}
	c, err = Parse(strings.Fields("-frameworks celeris,nethttp"), io.Discard)
	if err != nil || len(c.Frameworks) != 2 {
		t.Fatalf("env exclusion of an unlisted framework: %v %v", c, err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Setenv(ExcludeEnv, "")
	tests := []struct {
		args string
		want string
	}{
		{args: "-frameworks nope", want: `-frameworks: unknown name "nope"`},
		{args: "-scenarios simple,huge", want: `-scenarios: unknown name "huge"`},
		{args: "-protocols h4", want: `-protocols: unknown name "h4"`},
		{args: "-protocols ,", want: "-protocols: empty list"},
		{args: "-mode burst", want: `-mode: unknown mode "burst"`},
		{args: "-conns -1", want: "-conns: -1 is out of range"},
		{args: "-start 0", want: "-start: 0 is out of range"},
		{args: "-rounds -2", want: "-rounds: -2 is out of range"},
		{args: "-streams 0", want: "-streams: 0 is out of range"},
		{args: "-duration -1s", want: "-duration: -1s is out of range"},
		{args: "-warmup -1s", want: "-warmup: -1s is out of range"},
		{args: "-interval 0s", want: "-interval: 0s is out of range"},
		{args: "-server-cpus 0;1", want: "-server-cpus"},
		{args: "-exclude all", want: "every framework is excluded"},
		{args: "-progress maybe", want: "-progress"},
		{args: "extra", want: `unexpected argument "extra"`},
		{args: "-no-such-flag", want: "flag provided but not defined"},
		{args: "-conns x", want: "invalid value"},
		{args: "-ws-conns 1,0", want: "-ws-conns: \"0\" is not a count"},
		{args: "-ws-conns ,", want: "-ws-conns: empty list"},
		{args: "-ws-idle-conns 0", want: "-ws-idle-conns: 0 is out of range"},
		{args: "-frameworks gorilla -protocols h1", want: "nothing to measure"},
		{args: "-scenarios ws64 -protocols h1,h2c", want: "nothing to measure"},
		{args: "-bin-dir /no/such/celeris/bundle", want: "-bin-dir: stat /no/such/celeris/bundle"},
		{args: "-bin-dir cli.go", want: "-bin-dir: cli.go is not a directory"},
		{args: "-bin-dir . -bench-dir ..", want: "-bin-dir and -bench-dir exclude each other"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			_, err := Parse(strings.Fields(tt.args), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := Parse([]string{"-h"}, io.Discard); err != ErrHelp {
		t.Fatalf("-h: err = %v, want ErrHelp", err)
	}
}

func TestParseWS(t *testing.T) {
	t.Setenv(ExcludeEnv, "")
	c, err := Parse(strings.Fields("-protocols ws -scenarios ws64,ws16k -frameworks celeris,gorilla -ws-conns 2,50"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c.WSConns) != "[2 50]" || len(c.Scenarios) != 2 || c.Protocols[0] != catalog.WS {
		t.Fatalf("ws config: %v %v %v", c.WSConns, c.Scenarios, c.Protocols)
	}
}

func TestParseBinDir(t *testing.T) {
	t.Setenv(ExcludeEnv, "")
	dir := t.TempDir()
	c, err := Parse([]string{"-bin-dir", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.BinDir != dir || c.BenchDir != "" {
		t.Fatalf("BinDir %q BenchDir %q", c.BinDir, c.BenchDir)
	}
}
