//! The phase table: which phases each command runs over one resource, and in what order
//! (match.md §3.1, docs/ARCHITECTURE.md "Phase order"). The engine's mutate phase
//! ([`super::Engine::mutate_responses`], [`super::Engine::mutated_with_errors`]), `kpol check`'s
//! later phases, `kpol generate` ([`super::Engine::generate`]) and `kpol test` (every phase of
//! its row) read their rows here; the orders differ only as rows of this one table.

/// One phase of a command's run over a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The ClusterPolicy / Policy mutate rules, each policy in load order on the resource the
    /// one before left. Always a row's first phase: it starts from the resource as given.
    MutateRules,
    /// MutatingAdmissionPolicies and MutatingPolicies together, in load order, each on the
    /// resource the one before left (admission, cel.md §6.4).
    CelMutations,
    /// The MutatingAdmissionPolicies alone, in load order (the Kyverno CLI).
    MutatingAdmissionPolicies,
    /// The MutatingPolicies alone, in load order (the Kyverno CLI).
    MutatingPolicies,
    /// `verifyImages` rules (crate::verify_images, offline: what needs a registry is an
    /// error), through [`super::Engine::verify_images`].
    VerifyImages,
    /// Validate rules and the validating kinds, on the resource as the mutate phases left it.
    Validate,
    /// Generate rules and GeneratingPolicies.
    Generate,
    /// DeletingPolicies: not an admission phase, asked last.
    Delete,
}

/// A command that runs phases over resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `kpol check` (and `kpol lsp`'s diagnostics): admission's order.
    Check,
    /// `kpol mutate`: the mutate phases of admission.
    Mutate,
    /// `kpol generate`.
    Generate,
    /// `kpol test`: the Kyverno CLI's order (`test.go`), which runs the MutatingAdmissionPolicies
    /// before the MutatingPolicies and validates classic rules before both (the rows are
    /// compared with Kyverno's, so its order is kept).
    Test,
}

use Phase::{
    CelMutations, Delete, Generate, MutateRules, MutatingAdmissionPolicies, MutatingPolicies,
    Validate, VerifyImages,
};

/// Every command's phases, in order.
pub(crate) const TABLE: &[(Command, &[Phase])] = &[
    (
        Command::Check,
        &[MutateRules, CelMutations, Validate, Delete],
    ),
    (Command::Mutate, &[MutateRules, CelMutations]),
    (Command::Generate, &[Generate]),
    (
        Command::Test,
        &[
            MutateRules,
            MutatingAdmissionPolicies,
            MutatingPolicies,
            VerifyImages,
            Validate,
            Generate,
            Delete,
        ],
    ),
];

/// The phases `command` runs, in order.
pub fn of(command: Command) -> &'static [Phase] {
    TABLE
        .iter()
        .find(|(c, _)| *c == command)
        .map_or(&[], |(_, phases)| phases)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_one_row_and_mutate_rules_come_first() {
        for command in [
            Command::Check,
            Command::Mutate,
            Command::Generate,
            Command::Test,
        ] {
            assert_eq!(TABLE.iter().filter(|(c, _)| *c == command).count(), 1);
            let phases = of(command);
            assert!(!phases.is_empty());
            // The engine starts the mutate rules from the resource as given.
            assert!(!phases[1..].contains(&MutateRules), "{command:?}");
        }
    }

    #[test]
    fn admission_mutates_before_it_validates_and_deletes_last() {
        let check = of(Command::Check);
        let at = |p: Phase| check.iter().position(|q| *q == p).unwrap();
        assert!(at(MutateRules) < at(CelMutations));
        assert!(at(CelMutations) < at(Validate));
        assert_eq!(check.last(), Some(&Delete));
        assert_eq!(of(Command::Mutate), &check[..2]);
        // `kpol test` keeps the Kyverno CLI's split of the CEL mutations.
        let test = of(Command::Test);
        assert!(!test.contains(&CelMutations));
        assert_eq!(test.last(), Some(&Delete));
    }

    /// Kyverno's order, mutate → verify images → validate → generate, in the rows that hold
    /// those phases (`Engine::verify_images` is `kpol test`'s; `Engine::generate` runs
    /// `generate`'s row).
    #[test]
    fn verify_images_comes_between_the_mutations_and_validate() {
        let test = of(Command::Test);
        let at = |p: Phase| test.iter().position(|q| *q == p).unwrap();
        assert!(at(MutatingPolicies) < at(VerifyImages));
        assert!(at(MutatingAdmissionPolicies) < at(VerifyImages));
        assert!(at(VerifyImages) < at(Validate));
        assert!(at(Validate) < at(Generate));
        assert_eq!(of(Command::Generate), &[Generate]);
    }
}
