module sdkprobe

go 1.24

require sift.io/sdk v0.1.0

replace sift.io/sdk => ../../../../plugin-sdk/go
