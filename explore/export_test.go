package explore

// BlindMonitor makes o's monitor never flag linearizable: an incomplete
// monitor planted for TestDisagreementIsReported.
func BlindMonitor(o *Options) { o.blindMonitor = true }
