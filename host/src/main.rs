//! The `sift` binary: everything lives in [`sift_host::cli`].

fn main() -> std::process::ExitCode {
    sift_host::cli::main()
}
