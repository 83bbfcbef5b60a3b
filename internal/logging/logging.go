package logging

import (
	"slices"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// New returns controller-runtime's zap logger for opts, unsampled when
// verbosity 1 (debug) is on.
func New(opts *zap.Options) logr.Logger {
	var core zapcore.Core
	var final *zap.Options
	raw := zap.NewRaw(func(o *zap.Options) {
		*o = *opts
		// Runs before the options controller-runtime adds (its sampler
		// among them): core is the logger's core before sampling.
		o.ZapOpts = append(slices.Clone(opts.ZapOpts), uberzap.WrapCore(func(c zapcore.Core) zapcore.Core {
			core = c
			return c
		}))
		final = o
	})
	if final.Development || !final.Level.Enabled(zapcore.DebugLevel) || core == nil {
		return zapr.NewLogger(raw)
	}
	// controller-runtime's logger options after its sampler, on the core
	// before it. Logger options (not core wrappers) in opts.ZapOpts would
	// be dropped here: Steward sets none.
	return zapr.NewLogger(uberzap.New(core, uberzap.AddStacktrace(final.StacktraceLevel), uberzap.ErrorOutput(zapcore.AddSync(final.DestWriter))))
}
