package celeris

import "testing"

// TestEpollEngine runs engineTests on the epoll engine (CELERIS_TEST_ENGINE=epoll
// runs the whole package on it), in parallel but for the serial ones.
func TestEpollEngine(t *testing.T) {
	if testEngine == EngineEpoll {
		t.Skip("the whole package runs on the epoll engine already")
	}
	withEngine(t, EngineEpoll)
	for _, tc := range engineTests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.serial {
				t.Parallel()
			}
			tc.f(t)
		})
	}
}
