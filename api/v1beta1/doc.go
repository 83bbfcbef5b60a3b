// Package v1beta1 holds the Open Application Model API served by Steward,
// group core.oam.dev, version v1beta1.
//
// The types are schema-compatible with KubeVela for every field Steward
// implements, so an Application written for KubeVela is accepted unchanged.
// The package imports apimachinery only; condition types, reasons and
// well-known labels and annotations live here as documented constants so that
// controllers, the CLI and users share one vocabulary.
//
// +kubebuilder:object:generate=true
// +groupName=core.oam.dev
package v1beta1
