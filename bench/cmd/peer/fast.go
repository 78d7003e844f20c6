package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strconv"

	"github.com/gofiber/fiber/v3"
	"github.com/valyala/fasthttp"
)

// fasthttpServer routes with a switch, as fasthttp users do (HTTP/1.1 only).
type fasthttpServer struct {
	srv *fasthttp.Server
}

func newFasthttpServer() server {
	return &fasthttpServer{srv: &fasthttp.Server{Handler: fasthttpHandler, Name: "fasthttp"}}
}

func (s *fasthttpServer) serve(ln net.Listener) error { return s.srv.Serve(ln) }

func (s *fasthttpServer) shutdown(ctx context.Context) error { return s.srv.ShutdownWithContext(ctx) }

var (
	usersPrefix = []byte("/users/")
	postsInfix  = []byte("/posts/")
)

func fasthttpHandler(ctx *fasthttp.RequestCtx) {
	path := ctx.Path()
	switch {
	case ctx.IsGet() && string(path) == "/bench":
		ctx.SetContentType(textPlain)
		ctx.SetBodyString("OK")
	case ctx.IsGet() && string(path) == "/json":
		b, err := json.Marshal(hello)
		if err != nil {
			ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
			return
		}
		ctx.SetContentType(appJSON)
		ctx.SetBody(b)
	case ctx.IsPost() && string(path) == "/upload":
		ctx.SetContentType(textPlain)
		ctx.SetBody(strconv.AppendInt(nil, int64(len(ctx.PostBody())), 10))
	case ctx.IsGet() && string(path) == "/download":
		n, ok := downloadSize(string(ctx.QueryArgs().Peek("size")))
		if !ok {
			ctx.Error("bad size", fasthttp.StatusBadRequest)
			return
		}
		ctx.SetContentType(octetStream)
		ctx.SetBody(payload[:n])
	case ctx.IsGet() && bytes.HasPrefix(path, usersPrefix):
		// /users/{id}/posts/{postId}
		rest := path[len(usersPrefix):]
		i := bytes.Index(rest, postsInfix)
		if i <= 0 || len(rest) == i+len(postsInfix) || bytes.IndexByte(rest[i+len(postsInfix):], '/') >= 0 ||
			bytes.IndexByte(rest[:i], '/') >= 0 {
			ctx.Error("not found", fasthttp.StatusNotFound)
			return
		}
		ctx.SetContentType(textPlain)
		var buf [64]byte
		body := append(buf[:0], "user="...)
		body = append(body, rest[:i]...)
		body = append(body, " post="...)
		body = append(body, rest[i+len(postsInfix):]...)
		ctx.SetBody(body)
	default:
		ctx.Error("not found", fasthttp.StatusNotFound)
	}
}

// fiberServer is Fiber v3 (on fasthttp; HTTP/1.1 only).
type fiberServer struct {
	app *fiber.App
}

func newFiberServer() server {
	app := fiber.New()
	app.Get("/bench", func(c fiber.Ctx) error { return c.SendString("OK") })
	app.Get("/json", func(c fiber.Ctx) error { return c.JSON(hello) })
	app.Get("/users/:id/posts/:postId", func(c fiber.Ctx) error {
		return c.SendString("user=" + c.Params("id") + " post=" + c.Params("postId"))
	})
	app.Post("/upload", func(c fiber.Ctx) error {
		return c.SendString(strconv.Itoa(len(c.Body())))
	})
	app.Get("/download", func(c fiber.Ctx) error {
		n, ok := downloadSize(c.Query("size"))
		if !ok {
			return fiber.NewError(fiber.StatusBadRequest, "bad size")
		}
		c.Set(fiber.HeaderContentType, octetStream)
		return c.Send(payload[:n])
	})
	return &fiberServer{app: app}
}

func (s *fiberServer) serve(ln net.Listener) error {
	return s.app.Listener(ln, fiber.ListenConfig{DisableStartupMessage: true})
}

func (s *fiberServer) shutdown(ctx context.Context) error { return s.app.ShutdownWithContext(ctx) }
