package celeris

import (
	"os"
	"testing"
)

// testEngine is the engine startServer gives a Config that names none:
// CELERIS_TEST_ENGINE=std runs every socket test of the package on the std engine
// (.ci/run does), and TestStdEngine runs a table of them on it in any run.
var testEngine = Engine(os.Getenv("CELERIS_TEST_ENGINE"))

// withEngine makes startServer use e for the rest of t (tests of this package do
// not run in parallel).
func withEngine(t *testing.T, e Engine) {
	old := testEngine
	testEngine = e
	t.Cleanup(func() { testEngine = old })
}

// engineTests are the socket tests that run on every engine: HTTP/1.1, h2c
// (prior knowledge and Upgrade), pipelining, limits, timeouts, streaming,
// back-pressure, half-close, cancellation, graceful shutdown.
var engineTests = []struct {
	name string
	f    func(*testing.T)
}{
	{"H1Routes", TestH1Routes},
	{"H1KeepAliveReuse", TestH1KeepAliveReuse},
	{"H1Pipelining", TestH1Pipelining},
	{"H1OneByteWrites", TestH1OneByteWrites},
	{"H1Framing", TestH1Framing},
	{"H1ConnectionRules", TestH1ConnectionRules},
	{"H1ReadHeaderTimeout", TestH1ReadHeaderTimeout},
	{"H1BlockingHandlersIsolation", TestH1BlockingHandlersIsolation},
	{"RoutesBothProtocols", TestRoutesBothProtocols},
	{"H2OneConnectionManyGoroutines", TestH2OneConnectionManyGoroutines},
	{"H2ManyStreamsManyConnections", TestH2ManyStreamsManyConnections},
	{"H2RefusalHeader", TestH2RefusalHeader},
	{"H2CUpgrade", TestH2CUpgrade},
	{"H2CDisabled", TestH2CDisabled},
	{"GracefulShutdown", TestGracefulShutdown},
	{"H1CloseRequestWithBody", TestH1CloseRequestWithBody},
	{"H1CloseDoesNotTruncate", TestH1CloseDoesNotTruncate},
	{"H1ChunkedStreamLimit", TestH1ChunkedStreamLimit},
	{"H1StreamWriteAfterCloseFails", TestH1StreamWriteAfterCloseFails},
	{"H1StalledBodyTimesOut", TestH1StalledBodyTimesOut},
	{"H1PipelinedNonReaderBounded", TestH1PipelinedNonReaderBounded},
	{"H1StreamedUpload", TestH1StreamedUpload},
	{"H1ExpectContinue", TestH1ExpectContinue},
	{"H1ContextCancelledOnClientClose", TestH1ContextCancelledOnClientClose},
	{"H1ChunkedTrailers", TestH1ChunkedTrailers},
	{"H1HalfCloseAnswered", TestH1HalfCloseAnswered},
	{"H1HalfCloseSlowReader", TestH1HalfCloseSlowReader},
	{"H1HalfCloseNoUpgrade", TestH1HalfCloseNoUpgrade},
	{"H1HalfCloseStreamedUpload", TestH1HalfCloseStreamedUpload},
	{"H2HalfCloseEndsAfterQueuedOutput", TestH2HalfCloseEndsAfterQueuedOutput},
	{"StatsCounts", TestStatsCounts},
	{"ShutdownDeadlineCancelsContexts", TestShutdownDeadlineCancelsContexts},
	{"AdaptFlushStreams", TestAdaptFlushStreams},
	{"AdaptLargeResponse", TestAdaptLargeResponse},
	{"UploadStreamsWithBoundedMemory", TestUploadStreamsWithBoundedMemory},
	{"AdaptHijack", TestAdaptHijack},
	{"BlobLargeBodyBackPressure", TestBlobLargeBodyBackPressure},
	{"H2InlineRouteWhileOutputWaits", TestH2InlineRouteWhileOutputWaits},
}

// TestStdEngine runs engineTests on the std engine (the gnet engine runs them as
// themselves).
func TestStdEngine(t *testing.T) {
	if testEngine == EngineStd {
		t.Skip("the whole package runs on the std engine already")
	}
	for _, tc := range engineTests {
		t.Run(tc.name, func(t *testing.T) {
			withEngine(t, EngineStd)
			tc.f(t)
		})
	}
}
