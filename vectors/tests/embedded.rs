//! The set embedded in the crate (what an installed `loom` runs) is exactly the
//! committed set, and `export` writes it back out as a set that loads to the same
//! vectors and the same digest.

use loom_vectors::set::{
    default_cases_dir, embedded_files, embedded_set, embedded_version_file, export, load_set,
    read_version_file, vectors_dir,
};

fn on_disk() -> loom_vectors::VectorSet {
    load_set(&default_cases_dir()).unwrap_or_else(|e| panic!("{}", e[0]))
}

#[test]
fn conf_02_the_embedded_set_is_the_committed_set() {
    let embedded = embedded_set().unwrap_or_else(|e| panic!("{}", e[0]));
    let disk = on_disk();
    assert_eq!(embedded.vectors.len(), disk.vectors.len());
    assert_eq!(
        embedded, disk,
        "the embedded vectors differ from vectors/cases"
    );
    assert_eq!(
        embedded_version_file().unwrap(),
        read_version_file(&vectors_dir().join("VERSION.json")).unwrap()
    );
    assert_eq!(embedded.version_file(), embedded_version_file().unwrap());
    let schema = std::fs::read_to_string(vectors_dir().join("schema/vector.schema.json")).unwrap();
    assert!(
        embedded_files()
            .iter()
            .any(|(p, t)| *p == "schema/vector.schema.json" && *t == schema),
        "the vector schema travels with the set"
    );
}

#[test]
fn export_writes_a_set_that_loads_to_the_same_digest_and_refuses_to_overwrite() {
    let dir = std::env::temp_dir().join(format!("loom-vectors-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let n = export(&dir, false).expect("export into a fresh directory");
    assert_eq!(n, embedded_files().len());
    let exported = load_set(&dir.join("cases")).unwrap_or_else(|e| panic!("{}", e[0]));
    assert_eq!(exported.digest(), on_disk().digest());
    assert_eq!(
        read_version_file(&dir.join("VERSION.json")).unwrap(),
        exported.version_file()
    );

    // A second export into the same place is refused, and --force replaces the set:
    // a vector file that is not part of the embedded set does not survive.
    let err = export(&dir, false).unwrap_err();
    assert!(err.contains("--force"), "{err}");
    let stray = dir.join("cases/fold/fold-not-in-the-set.json");
    std::fs::write(&stray, "{}").unwrap();
    export(&dir, true).expect("export --force");
    assert!(!stray.exists());
    assert_eq!(
        load_set(&dir.join("cases")).unwrap().digest(),
        exported.digest()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
