package main

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestAnswer(t *testing.T) {
	head := "GET /bench HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, tc := range []struct {
		in        string
		responses int
		used      int
	}{
		{"", 0, 0},
		{head[:10], 0, 0},
		{head, 1, len(head)},
		{head + head + head[:5], 2, 2 * len(head)},
		{strings.Repeat(head, 16), 16, 16 * len(head)},
	} {
		out, used := answer([]byte(tc.in), nil)
		if used != tc.used || bytes.Count(out, []byte("HTTP/1.1 200 OK")) != tc.responses || len(out) != tc.responses*len(response) {
			t.Errorf("answer(%q) = %d responses, used %d; want %d, %d", tc.in, bytes.Count(out, response), used, tc.responses, tc.used)
		}
	}
}

// TestNetFloor checks the net engine over a socket, plaintext and TLS: three
// pipelined heads, sent in two writes, get three responses.
func TestNetFloor(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "tls"}[useTLS], func(t *testing.T) { testNetFloor(t, useTLS) })
	}
}

func testNetFloor(t *testing.T, useTLS bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var tc *tls.Config
	if useTLS {
		if tc, err = tlsConfig(); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _ = netFloor(addr, tc) }()
	var c net.Conn
	for i := 0; i < 100; i++ {
		if c, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err == nil && useTLS {
		tlc := tls.Client(c, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
		_ = tlc.SetDeadline(time.Now().Add(5 * time.Second))
		if err = tlc.Handshake(); err == nil && tlc.ConnectionState().NegotiatedProtocol != "http/1.1" {
			t.Fatalf("ALPN %q", tlc.ConnectionState().NegotiatedProtocol)
		}
		c = tlc
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := "GET /bench HTTP/1.1\r\nHost: x\r\n\r\n"
	req := head + head + head
	if _, err := io.WriteString(c, req[:40]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if _, err := io.WriteString(c, req[40:]); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, 3*len(response))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, bytes.Repeat(response, 3)) {
		t.Fatalf("got %q", got)
	}
}
