module {{name}}

go 1.24

require sift.io/sdk v0.1.0

// sift's Go SDK, copied here by `sift new`: nothing is fetched.
replace sift.io/sdk => ./sdk
