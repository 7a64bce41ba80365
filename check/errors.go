package check

import (
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/httpx"
)

// classifyErr maps a failed request (or body read) to a verdict and an
// error class (httpx.ErrorClass). tlsFailed reports that the attempt's TLS
// handshake returned an error (from httptrace).
func classifyErr(err error, tlsFailed bool) (audit.Verdict, string) {
	class := httpx.ErrorClass(err, tlsFailed)
	return verdictOfClass(class), class
}

// verdictOfClass is the verdict a live check gives a request that failed
// with an error of class.
func verdictOfClass(class string) audit.Verdict {
	switch class {
	case httpx.ClassPolicy:
		return audit.VerdictRefused
	case httpx.ClassCanceled, httpx.ClassDNSTimeout, httpx.ClassTimeout:
		return audit.VerdictTimeout
	case httpx.ClassDNS:
		return audit.VerdictDNSError
	case httpx.ClassTLS:
		return audit.VerdictTLSError
	}
	return audit.VerdictConnectionError
}
