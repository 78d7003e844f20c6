package demo

import "github.com/celeris-dev/celeris"

// extensions are what Extend added.
var extensions []func(s *celeris.Server)

// Extend adds f to the building of the demo server: f gets the server after
// the demo's routes and middleware are in place (not in -bare mode), to add
// its own routes. cmd/demo adds the OpenAPI description and the docs page this
// way, from a module the core module cannot require. Call it before Main or
// NewTLSServer, from an init function.
func Extend(f func(s *celeris.Server)) { extensions = append(extensions, f) }
