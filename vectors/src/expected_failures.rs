//! Every vector the reference kernel is expected to fail, with the reason. They still
//! run: a listed vector that fails is reported `xfail`, and one that passes fails the
//! run ("unexpected pass"), so this list can only shrink. Foreign kernels keep their
//! own known failures in a baseline file (`loom vectors run --baseline`).

/// `(vector id, reason)`. Empty: the reference kernel passes every vector it generated.
pub const EXPECTED_FAILURES: &[(&str, &str)] = &[];

/// The reason a vector is expected to fail, if it is listed.
pub fn reason_for(id: &str) -> Option<&'static str> {
    EXPECTED_FAILURES
        .iter()
        .find(|(v, _)| *v == id)
        .map(|(_, r)| *r)
}
