package session_test

import (
	"crypto/subtle"
	"log"
	"os"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/session"
)

func Example() {
	// 32-byte keys from the environment (e.g. `openssl rand -hex 32`, decoded);
	// the new key first, the retiring one after it.
	newKey, oldKey := []byte(os.Getenv("SESSION_KEY")), []byte(os.Getenv("SESSION_KEY_OLD"))
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(session.New(session.Config{Keys: [][]byte{newKey, oldKey}}))
	s.POST("/login", func(c *celeris.Context) error {
		if subtle.ConstantTimeCompare([]byte(c.FormValue("password")), []byte("from a user store")) != 1 {
			return celeris.NewHTTPError(401, "")
		}
		sess, err := session.Get(c)
		if err != nil {
			return err
		}
		sess.Regenerate() // a new ID at login: session fixation
		sess.Set("user", c.FormValue("user"))
		if err := sess.Save(); err != nil { // before the answer is written
			return err
		}
		return c.Redirect(303, "/")
	})
	s.GET("/", func(c *celeris.Context) error {
		sess, err := session.Get(c)
		if err != nil {
			return err
		}
		return c.String(200, "hello "+sess.GetString("user"))
	})
	log.Fatal(s.Start())
}

// Sessions kept on the server; the cookie holds only a random ID.
func Example_memoryStore() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(session.New(session.Config{Store: session.NewMemoryStore()}))
	s.POST("/logout", func(c *celeris.Context) error {
		sess, err := session.Get(c)
		if err != nil {
			return err
		}
		sess.Destroy()
		return sess.Save()
	})
	log.Fatal(s.Start())
}
