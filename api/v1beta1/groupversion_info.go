package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the OAM API.
	GroupVersion = schema.GroupVersion{Group: "core.oam.dev", Version: "v1beta1"}

	// SchemeBuilder registers the OAM types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the OAM types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
