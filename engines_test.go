package celeris

import (
	"os"
	"strings"
	"sync"
	"testing"
)

// testEngine is the engine startServer gives a Config that names none:
// CELERIS_TEST_ENGINE=std runs every socket test of the package on the std engine
// (.ci/run does), and TestStdEngine runs a table of them on it in any run.
var testEngine = Engine(os.Getenv("CELERIS_TEST_ENGINE"))

// testEngines holds withEngine's choices by test name. A choice belongs to its
// test and that test's subtests, never to a package global, so tests that run
// in parallel may each choose.
var testEngines sync.Map // test name -> Engine

// withEngine makes startServer (and engineFor) use e for the rest of t and in
// its subtests.
func withEngine(t *testing.T, e Engine) {
	testEngines.Store(t.Name(), e)
	t.Cleanup(func() { testEngines.Delete(t.Name()) })
}

// engineFor is the engine for a server of t: withEngine's choice for t or the
// nearest test above it, else testEngine.
func engineFor(t testing.TB) Engine {
	for name := t.Name(); ; {
		if e, ok := testEngines.Load(name); ok {
			return e.(Engine)
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return testEngine
		}
		name = name[:i]
	}
}

// engineTests are the socket tests that run on every engine: HTTP/1.1, h2c
// (prior knowledge and Upgrade), pipelining, limits, timeouts, streaming,
// back-pressure, half-close, cancellation, graceful shutdown.
var engineTests = []struct {
	name string
	f    func(*testing.T)
	// serial: the test measures the process (heap, RSS) or loads it heavily, so
	// TestStdEngine runs it alone.
	serial bool
}{
	{name: "H1Routes", f: TestH1Routes},
	{name: "H1KeepAliveReuse", f: TestH1KeepAliveReuse},
	{name: "H1Pipelining", f: TestH1Pipelining},
	{name: "H1OneByteWrites", f: TestH1OneByteWrites},
	{name: "H1Framing", f: TestH1Framing},
	{name: "H1ConnectionRules", f: TestH1ConnectionRules},
	{name: "H1ReadHeaderTimeout", f: TestH1ReadHeaderTimeout},
	{name: "H1BlockingHandlersIsolation", f: TestH1BlockingHandlersIsolation},
	{name: "RoutesBothProtocols", f: TestRoutesBothProtocols},
	{name: "H2OneConnectionManyGoroutines", f: TestH2OneConnectionManyGoroutines},
	{name: "H2ManyStreamsManyConnections", f: TestH2ManyStreamsManyConnections},
	{name: "H2RefusalHeader", f: TestH2RefusalHeader},
	{name: "H2CUpgrade", f: TestH2CUpgrade},
	{name: "H2CDisabled", f: TestH2CDisabled},
	{name: "GracefulShutdown", f: TestGracefulShutdown, serial: true},
	{name: "H1CloseRequestWithBody", f: TestH1CloseRequestWithBody},
	{name: "H1CloseDoesNotTruncate", f: TestH1CloseDoesNotTruncate},
	{name: "H1ChunkedStreamLimit", f: TestH1ChunkedStreamLimit},
	{name: "H1StreamWriteAfterCloseFails", f: TestH1StreamWriteAfterCloseFails},
	{name: "H1StalledBodyTimesOut", f: TestH1StalledBodyTimesOut},
	{name: "H1PipelinedNonReaderBounded", f: TestH1PipelinedNonReaderBounded, serial: true},
	{name: "H1StreamedUpload", f: TestH1StreamedUpload},
	{name: "H1ExpectContinue", f: TestH1ExpectContinue},
	{name: "H1ContextCancelledOnClientClose", f: TestH1ContextCancelledOnClientClose},
	{name: "H1ChunkedTrailers", f: TestH1ChunkedTrailers},
	{name: "H1HalfCloseAnswered", f: TestH1HalfCloseAnswered},
	{name: "H1HalfCloseSlowReader", f: TestH1HalfCloseSlowReader},
	{name: "H1HalfCloseNoUpgrade", f: TestH1HalfCloseNoUpgrade},
	{name: "H1HalfCloseStreamedUpload", f: TestH1HalfCloseStreamedUpload},
	{name: "H2HalfCloseEndsAfterQueuedOutput", f: TestH2HalfCloseEndsAfterQueuedOutput, serial: true},
	{name: "StatsCounts", f: TestStatsCounts},
	{name: "ShutdownDeadlineCancelsContexts", f: TestShutdownDeadlineCancelsContexts},
	{name: "AdaptFlushStreams", f: TestAdaptFlushStreams},
	{name: "AdaptLargeResponse", f: TestAdaptLargeResponse},
	{name: "UploadStreamsWithBoundedMemory", f: TestUploadStreamsWithBoundedMemory, serial: true},
	{name: "AdaptHijack", f: TestAdaptHijack},
	{name: "BlobLargeBodyBackPressure", f: TestBlobLargeBodyBackPressure, serial: true},
	{name: "H2InlineRouteWhileOutputWaits", f: TestH2InlineRouteWhileOutputWaits, serial: true},
}

// TestStdEngine runs engineTests on the std engine (the gnet engine runs them as
// themselves), in parallel but for the serial ones.
func TestStdEngine(t *testing.T) {
	if testEngine == EngineStd {
		t.Skip("the whole package runs on the std engine already")
	}
	withEngine(t, EngineStd)
	for _, tc := range engineTests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.serial {
				t.Parallel()
			}
			tc.f(t)
		})
	}
}
