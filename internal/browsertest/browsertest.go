// Package browsertest is the repository's name for package
// github.com/celeris-dev/celeris/celeristest/browser, which its tests import
// from here.
package browsertest

import "github.com/celeris-dev/celeris/celeristest/browser"

// The names the repository's tests use.
type (
	Browser       = browser.Browser
	Page          = browser.Page
	ProtocolError = browser.ProtocolError
)

// PollInterval is browser.PollInterval.
const PollInterval = browser.PollInterval

var (
	// Chromium is browser.Chromium.
	Chromium = browser.Chromium
	// Start is browser.Start.
	Start = browser.Start
)
