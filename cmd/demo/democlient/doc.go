// Package democlient is the client oapi-codegen generates from the demo's
// /openapi.json (TestDemoClientGenerated keeps it current).
package democlient
