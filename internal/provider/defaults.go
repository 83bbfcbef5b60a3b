package provider

// Defaults returns every action this package carries out: `vela/http`,
// `vela/email`, `vela/config` and `vela/util`; http and email dial through
// opts.Egress. The controller adds `vela/kube` (and the other actions that
// record what they apply).
func Defaults(opts HTTPOptions) Registry {
	return HTTP(opts).With(Email(opts.Egress), Config(), Util())
}

// Remote reports whether an action reaches outside the cluster (`vela/http`,
// `vela/email`): it may wait on a server for as long as its timeout, so it
// runs off the reconcile workers (steprun.Background).
func Remote(name string) bool {
	return name == "http.do" || name == "email.send"
}
