module github.com/tcs-robotics/tcs

go 1.26.8

require (
	github.com/bluenviron/goroslib/v2 v2.1.5
	github.com/rs/zerolog v1.34.0
	golang.org/x/sys v0.38.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/gookit/color v1.5.4 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.19 // indirect
	github.com/xo/terminfo v0.0.0-20210125001918-ca9a967f8778 // indirect
)
