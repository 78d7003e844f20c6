package celeris

import "github.com/celeris-dev/celeris/internal/epoll"

var _ fileEngine = (*epoll.Engine)(nil)
