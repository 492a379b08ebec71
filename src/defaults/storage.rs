//! `storage.k8s.io/v1` defaults, Kubernetes v1.34: `pkg/apis/storage/v1/defaults.go`.

use super::{Node, Planner, s};

pub(crate) fn storage_class(p: &mut Planner, root: &Node) {
    // StorageClass has no `spec`: its fields are top-level.
    p.set_if_absent(root, &[], "reclaimPolicy", s("Delete"));
    p.set_if_absent(root, &[], "volumeBindingMode", s("Immediate"));
}
