package check

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/linkrot/linkrot/audit"
)

// classifyErr maps a failed request (or body read) to a verdict and an
// error class, by error types only (errors.As, errors.Is). tlsFailed
// reports that the attempt's TLS handshake returned an error (from
// httptrace): it catches alerts the peer sent, whose error type crypto/tls
// does not export.
func classifyErr(err error, tlsFailed bool) (audit.Verdict, string) {
	var (
		refused  *RefusedError
		dnsErr   *net.DNSError
		certErr  *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		invalid  x509.CertificateInvalidError
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
		echErr   *tls.ECHRejectionError
		netErr   net.Error
		errno    syscall.Errno
	)
	switch {
	case errors.As(err, &refused):
		return audit.VerdictRefused, "policy"
	case errors.Is(err, context.Canceled):
		return audit.VerdictTimeout, "canceled"
	case errors.As(err, &dnsErr):
		if dnsErr.IsTimeout {
			return audit.VerdictTimeout, "dns-timeout"
		}
		return audit.VerdictDNSError, "dns"
	case errors.As(err, &certErr), errors.As(err, &unknown), errors.As(err, &hostErr),
		errors.As(err, &invalid), errors.As(err, &recErr), errors.As(err, &alertErr),
		errors.As(err, &echErr):
		return audit.VerdictTLSError, "tls"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return audit.VerdictTimeout, "timeout"
	case tlsFailed:
		return audit.VerdictTLSError, "tls"
	case errors.As(err, &errno):
		switch errno {
		case syscall.ECONNREFUSED:
			return audit.VerdictConnectionError, "refused"
		case syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE:
			return audit.VerdictConnectionError, "reset"
		case syscall.ENETUNREACH, syscall.EHOSTUNREACH, syscall.EHOSTDOWN, syscall.EADDRNOTAVAIL:
			return audit.VerdictConnectionError, "unreachable"
		}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return audit.VerdictConnectionError, "closed"
	}
	return audit.VerdictConnectionError, "other"
}
