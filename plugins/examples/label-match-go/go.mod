module labelmatch

go 1.24

require sift.io/sdk v0.1.0

// The Go SDK of this repository; `sift new --lang go` copies it into ./sdk.
replace sift.io/sdk => ../../../plugin-sdk/go
