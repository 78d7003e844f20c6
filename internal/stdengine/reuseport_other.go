//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package stdengine

import "errors"

func setReusePort(uintptr) error {
	return errors.New("stdengine: SO_REUSEPORT is not available on this OS")
}
