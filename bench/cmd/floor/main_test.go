package main

import (
	"bytes"
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

// TestNetFloor checks the net engine over a socket: three pipelined heads, sent in
// two writes, get three responses.
func TestNetFloor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	go func() { _ = netFloor(addr) }()
	var c net.Conn
	for i := 0; i < 100; i++ {
		if c, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
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
