//! `loom docs`: the documents and schemas the help and messages refer to, carried in the
//! binary (`include_str!`), so an installed `loom` can print them without its source tree.

use super::{EXIT_OK, EXIT_USAGE};
use clap::Args;
use std::path::PathBuf;

/// One document a user may need away from the source tree, with the schemas it defines.
pub struct Topic {
    /// The name `loom docs NAME` takes.
    pub name: &'static str,
    /// What it is, for the list.
    pub about: &'static str,
    /// The Markdown file: (its name when exported, its text).
    pub document: (&'static str, &'static str),
    /// The JSON Schemas that go with it: (file name, text).
    pub schemas: &'static [(&'static str, &'static str)],
}

/// Every topic, in the order `loom docs` lists them.
pub const TOPICS: &[Topic] = &[
    Topic {
        name: "store-protocol",
        about:
            "the stdio store protocol a `cmd:` store adapter speaks (loom conform --store cmd:…)",
        document: ("store.md", include_str!("../../docs/protocols/store.md")),
        schemas: &[(
            "store.schema.json",
            include_str!("../../docs/protocols/store.schema.json"),
        )],
    },
    Topic {
        name: "kernel-protocol",
        about: "the stdio kernel protocol a kernel adapter speaks (--kernel-cmd)",
        document: ("kernel.md", include_str!("../../docs/protocols/kernel.md")),
        schemas: &[(
            "kernel.schema.json",
            include_str!("../../docs/protocols/kernel.schema.json"),
        )],
    },
    Topic {
        name: "event-schema",
        about: "the event envelope, the folded state and flow scripts",
        document: (
            "event-schema.md",
            include_str!("../../docs/event-schema.md"),
        ),
        schemas: &[
            (
                "envelope.schema.json",
                include_str!("../../docs/schemas/envelope.schema.json"),
            ),
            (
                "state.schema.json",
                include_str!("../../docs/schemas/state.schema.json"),
            ),
            (
                "flow-script.schema.json",
                include_str!("../../docs/schemas/flow-script.schema.json"),
            ),
        ],
    },
    Topic {
        name: "vectors",
        about: "the language-neutral kernel vectors: format, kinds, how they are judged",
        document: ("vectors.md", include_str!("../../docs/vectors.md")),
        schemas: &[(
            "vector.schema.json",
            include_str!("../../vectors/schema/vector.schema.json"),
        )],
    },
    Topic {
        name: "report-format",
        about: "report.json and its renderings (JUnit, Markdown, HTML, summary, badge)",
        document: (
            "report-format.md",
            include_str!("../../docs/report-format.md"),
        ),
        schemas: &[(
            "report.schema.json",
            include_str!("../../reports/schema/report.schema.json"),
        )],
    },
];

/// Arguments of `loom docs`.
#[derive(Args)]
#[command(
    after_help = "Topics: store-protocol, kernel-protocol, event-schema, vectors, report-format. Without a topic, \
lists them. The documents are the ones this binary was built with, so they match its behaviour.\n\n\
Examples:\n  loom docs\n  loom docs store-protocol\n  loom docs kernel-protocol --schema\n  loom docs event-schema --export loom-docs\n  \
loom docs --export loom-docs\n\n\
Exit status: 0 printed or written, 2 usage error (an unknown topic) or a directory that cannot be written."
)]
pub struct DocsArgs {
    /// The document to print (store-protocol, kernel-protocol, event-schema, vectors, report-format).
    pub topic: Option<String>,
    /// Print the topic's JSON Schema(s) instead of its document.
    #[arg(long, requires = "topic", conflicts_with = "export")]
    pub schema: bool,
    /// Write the topic's document and schemas into DIR (every topic when none is named).
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,
}

/// Runs `loom docs`.
pub fn run(args: DocsArgs) -> u8 {
    let chosen: Vec<&Topic> = match &args.topic {
        None if args.export.is_none() => {
            for t in TOPICS {
                println!("{:<16} {}", t.name, t.about);
            }
            println!(
                "\nloom docs TOPIC prints one; --export DIR writes them with their JSON Schemas."
            );
            return EXIT_OK;
        }
        None => TOPICS.iter().collect(),
        Some(name) => match TOPICS.iter().find(|t| t.name == name) {
            Some(t) => vec![t],
            None => {
                let names: Vec<&str> = TOPICS.iter().map(|t| t.name).collect();
                eprintln!(
                    "error: no document named {name:?} (topics: {})",
                    names.join(", ")
                );
                return EXIT_USAGE;
            }
        },
    };
    if let Some(dir) = &args.export {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: cannot write into {}: {e}", dir.display());
            return EXIT_USAGE;
        }
        for t in &chosen {
            for (file, text) in std::iter::once(&t.document).chain(t.schemas) {
                let path = dir.join(file);
                if let Err(e) = std::fs::write(&path, text) {
                    eprintln!("error: cannot write {}: {e}", path.display());
                    return EXIT_USAGE;
                }
                println!("{}", super::shown(&path));
            }
        }
        return EXIT_OK;
    }
    let t = chosen[0];
    if args.schema {
        for (i, (_, text)) in t.schemas.iter().enumerate() {
            if i > 0 {
                println!();
            }
            print!("{text}");
        }
    } else {
        print!("{}", t.document.1);
    }
    EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::TOPICS;

    #[test]
    fn every_schema_is_json_and_every_topic_a_document() {
        for t in TOPICS {
            assert!(t.document.1.starts_with("# "), "{}", t.name);
            for (file, text) in t.schemas {
                serde_json::from_str::<serde_json::Value>(text)
                    .unwrap_or_else(|e| panic!("{file}: {e}"));
            }
        }
    }
}
