//go:build race

package poison

// Enabled: this is a race build; recycled request buffers are poisoned.
const Enabled = true
