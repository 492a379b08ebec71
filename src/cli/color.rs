//! Whether the human output has colour: `--color`, `--remove-color`, `NO_COLOR`
//! (https://no-color.org: set and not empty turns colour off unless asked for), and whether
//! standard output is a terminal.

use super::args::ColorWhen;

/// Whether to colour, given `--color` and whether the output is a terminal.
pub fn enabled(when: ColorWhen, terminal: bool) -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => terminal && !no_color && !dumb,
    }
}

/// `text` in the SGR style `style` (`"1;31"`: bold red), or as it is without colour.
pub fn paint(on: bool, style: &str, text: &str) -> String {
    if on {
        format!("\x1b[{style}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}
