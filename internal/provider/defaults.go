package provider

// Defaults returns every action this package carries out: `vela/http`,
// `vela/email`, `vela/config` and `vela/util`. The controller adds
// `vela/kube` (and the other actions that record what they apply).
func Defaults(opts HTTPOptions) Registry {
	return HTTP(opts).With(Email(), Config(), Util())
}
