package httpx

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/linkrot/linkrot/netguard"
)

// Error classes of ErrorClass: what a failed request ran into. The
// exported ones are those callers tell apart; every class is a stable
// string stored with a check (its ErrorClass) and shown in reports.
const (
	ClassPolicy      = "policy"      // the SSRF guard refused the address
	ClassCanceled    = "canceled"    // the caller's context was canceled
	ClassDNSTimeout  = "dns-timeout" // the DNS lookup timed out
	ClassDNS         = "dns"         // the name did not resolve
	ClassTLS         = "tls"         // certificate or handshake failure
	ClassTimeout     = "timeout"     // connect, headers or body too slow
	classRefused     = "refused"     // connection refused
	classReset       = "reset"       // connection reset or aborted
	classUnreachable = "unreachable" // no route to the network or host
	classClosed      = "closed"      // the peer closed the connection early
	classOther       = "other"
)

// ErrorClass maps a failed request (or body read) to its class, by error
// types only (errors.As, errors.Is), never by message text. tlsFailed
// reports that the attempt's TLS handshake returned an error (seen with
// httptrace): it catches alerts the peer sent, whose error type crypto/tls
// does not export.
func ErrorClass(err error, tlsFailed bool) string {
	var (
		refused  *netguard.RefusedError
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
		return ClassPolicy
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	case errors.As(err, &dnsErr):
		if dnsErr.IsTimeout {
			return ClassDNSTimeout
		}
		return ClassDNS
	case errors.As(err, &certErr), errors.As(err, &unknown), errors.As(err, &hostErr),
		errors.As(err, &invalid), errors.As(err, &recErr), errors.As(err, &alertErr),
		errors.As(err, &echErr):
		return ClassTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ClassTimeout
	case tlsFailed:
		return ClassTLS
	case errors.As(err, &errno):
		switch errno {
		case syscall.ECONNREFUSED:
			return classRefused
		case syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE:
			return classReset
		case syscall.ENETUNREACH, syscall.EHOSTUNREACH, syscall.EHOSTDOWN, syscall.EADDRNOTAVAIL:
			return classUnreachable
		}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return classClosed
	}
	return classOther
}
