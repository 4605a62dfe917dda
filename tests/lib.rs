//! Integration tests for sift live in `tests/`; conformance cases in `cases/`.
