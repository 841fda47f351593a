//! The `noggin` command: parses flags, sets up logging, runs a subcommand
//! (see `noggin::cli`) and turns its result into an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = noggin::config::Cli::from_command_line();
    noggin::cli::init_logging(&cli.command);
    match noggin::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`noggin search … | head -1`): as other
        // command-line tools, stop without a word.
        Err(error)
            if error.chain().any(|cause| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("noggin: {}", one_line(&error));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, each cause once: many errors say
/// their cause in their own message already (`cannot read "x": No such
/// file`), and repeating it would read as two failures.
fn one_line(error: &anyhow::Error) -> String {
    let mut line = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !line.ends_with(&cause) {
            line.push_str(": ");
            line.push_str(&cause);
        }
    }
    line
}
