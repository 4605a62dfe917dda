module sift.io/sdk

go 1.24
