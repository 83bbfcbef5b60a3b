package provider

// Defaults returns the actions that need nothing of the step's
// Application beyond its Env: `vela/http`, `vela/email`, `vela/config`
// and `vela/util`; http and email dial through opts.Egress. The
// controller adds `vela/kube`'s for each step (Kube), since they record
// what they apply in the Application's tracker.
func Defaults(opts HTTPOptions) Registry {
	return HTTP(opts).With(Email(opts.Egress), Config(), Util())
}

// Remote reports whether an action reaches outside the cluster (`vela/http`,
// `vela/email`): it may wait on a server for as long as its timeout, so it
// runs off the reconcile workers (steprun.Background).
func Remote(name string) bool {
	return name == "http.do" || name == "email.send"
}
