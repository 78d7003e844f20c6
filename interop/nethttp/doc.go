// Package nethttp tests net/http middleware and libraries from other modules
// (chi's middleware, go-playground/validator) with Celeris: WrapMiddleware must
// carry what they change in the request and see what the chain writes, and
// Config.Validator must report validator's field errors. They live in a module
// of their own so that the core go.mod stays gnet + golang.org/x.
package nethttp
