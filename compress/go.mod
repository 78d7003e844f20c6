module github.com/celeris-dev/celeris/compress

go 1.26.0

replace github.com/celeris-dev/celeris => ../

require (
	github.com/andybalholm/brotli v1.3.0
	github.com/celeris-dev/celeris v0.1.0
	github.com/gofiber/fiber/v2 v2.52.15
	github.com/klauspost/compress v1.18.6
	github.com/molecule-man/go-brrr v1.3.1
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mattn/go-runewidth v0.0.16 // indirect
	github.com/panjf2000/ants/v2 v2.12.1 // indirect
	github.com/panjf2000/gnet/v2 v2.10.0 // indirect
	github.com/rivo/uniseg v0.2.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasthttp v1.51.0 // indirect
	github.com/valyala/tcplisten v1.0.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1 // indirect
)
