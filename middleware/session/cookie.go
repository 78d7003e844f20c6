package session

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// sealer encrypts and authenticates cookie values with AES-GCM (NIST SP 800-38D):
// a value is base64url(nonce || ciphertext || tag), sealed with the first key
// and opened with any key, so that keys can rotate: put the new key first, keep
// the old ones after it until the cookies they sealed have expired. The cookie's
// name is the additional authenticated data, so a value cannot be moved to
// another cookie.
type sealer struct {
	aeads []cipher.AEAD
}

// errOpen is the error of a value that no key opens (forged, corrupted, or sealed
// with a retired key).
var errOpen = errors.New("session: cookie value does not authenticate")

func newSealer(keys [][]byte) (*sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("session: the cookie store needs at least one key")
	}
	s := &sealer{}
	for i, k := range keys {
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("session: key %d: %w (AES needs 16, 24 or 32 bytes)", i, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		s.aeads = append(s.aeads, aead)
	}
	return s, nil
}

// seal returns the cookie value of plaintext for cookie name.
func (s *sealer) seal(name string, plaintext []byte) string {
	aead := s.aeads[0]
	out := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	// A random 96-bit nonce per value: NIST SP 800-38D §8.3 bounds a key to 2^32
	// such values, far more than a key's life of cookies.
	_, _ = rand.Read(out) // crypto/rand.Read never fails (Go 1.24+)
	out = aead.Seal(out, out, plaintext, []byte(name))
	return base64.RawURLEncoding.EncodeToString(out)
}

// open authenticates and decrypts a cookie value. rotated is true when a key other
// than the first opened it (the value should be sealed again with the first).
func (s *sealer) open(name, value string) (plaintext []byte, rotated bool, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return nil, false, errOpen
	}
	for i, aead := range s.aeads {
		if len(raw) < aead.NonceSize()+aead.Overhead() {
			return nil, false, errOpen
		}
		nonce, ct := raw[:aead.NonceSize()], raw[aead.NonceSize():]
		if p, err := aead.Open(nil, nonce, ct, []byte(name)); err == nil {
			return p, i > 0, nil
		}
	}
	return nil, false, errOpen
}
