// Command bench measures Celeris against other Go web frameworks, each in
// its own server process, over HTTP/1.1 and h2c, and writes results.json,
// results.md and one SVG chart per scenario and protocol:
//
//	cd bench && go run ./cmd/bench -frameworks celeris,nethttp,fasthttp \
//	    -scenarios simple,json -protocols h1,h2c -mode rampup -out results/
//
// With prebuilt servers (a bundle from bench/scripts/bundle.sh, no go
// command needed): ./bench -bin-dir . [flags]. "bench scaling -base FILES
// -multi FILES" prints the scaling table of single- against multi-core runs
// (bench/scripts/multicore.sh); "bench peers -results FILES" Celeris against
// its peers, round by round.
//
// Exit status: 0 when everything was measured, 1 when some server failed
// (the reports still list it) or nothing could run, 2 for bad flags.
// See bench/README.md for the method and every flag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/celeris-dev/celeris/bench/internal/cli"
	"github.com/celeris-dev/celeris/bench/internal/report"
	"github.com/celeris-dev/celeris/bench/internal/suite"
)

func main() {
	if len(os.Args) > 1 {
		sub := map[string]func([]string, io.Writer, io.Writer) error{"scaling": suite.Scaling, "peers": suite.Peers}[os.Args[1]]
		if sub != nil {
			err := sub(os.Args[2:], os.Stdout, os.Stderr)
			switch {
			case errors.Is(err, flag.ErrHelp):
				os.Exit(0)
			case err != nil:
				fmt.Fprintf(os.Stderr, "bench %s: %v\n", os.Args[1], err)
				os.Exit(2)
			}
			return
		}
	}
	cfg, err := cli.Parse(os.Args[1:], os.Stderr)
	if errors.Is(err, cli.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n(run with -h for the flags)\n", err)
		os.Exit(2)
	}
	if cfg.LoaderProf != "" {
		f, err := os.Create(cfg.LoaderProf)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(1)
		}
		code := run(cfg)
		pprof.StopCPUProfile()
		f.Close()
		os.Exit(code)
	}
	os.Exit(run(cfg))
}

func run(cfg *cli.Config) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, files, err := suite.Run(ctx, cfg, os.Stdout)
	for _, f := range files {
		fmt.Println("wrote", f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	failed := 0
	for _, res := range rep.Results {
		if res.Status == report.StatusFailed {
			failed++
			fmt.Fprintf(os.Stderr, "bench: FAILED %s %s %s: %v\n", res.Framework, res.Scenario, res.Protocol, res.Notes)
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}
