//! The `sift` binary: everything lives in [`sift_host::cli`].

/// mimalloc rather than glibc's malloc: filter tasks allocate statuses that
/// the committing thread frees, which glibc serialises on the allocating
/// thread's arena lock (host/Cargo.toml, BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    sift_host::cli::main()
}
