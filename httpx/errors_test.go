package httpx

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/linkrot/linkrot/netguard"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestErrorClass(t *testing.T) {
	op := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	tests := []struct {
		err       error
		tlsFailed bool
		want      string
	}{
		{fmt.Errorf("get: %w", &netguard.RefusedError{Reason: "loopback address"}), false, ClassPolicy},
		{fmt.Errorf("get: %w", context.Canceled), false, ClassCanceled},
		{&net.DNSError{Err: "timeout", IsTimeout: true}, false, ClassDNSTimeout},
		{&net.DNSError{Err: "no such host", IsNotFound: true}, false, ClassDNS},
		{x509.UnknownAuthorityError{}, false, ClassTLS},
		{context.DeadlineExceeded, false, ClassTimeout},
		{timeoutErr{}, false, ClassTimeout},
		{errors.New("remote error"), true, ClassTLS},
		{op(syscall.ECONNREFUSED), false, classRefused},
		{op(syscall.ECONNRESET), false, classReset},
		{op(syscall.EHOSTUNREACH), false, classUnreachable},
		{op(syscall.EINVAL), false, classOther},
		{io.ErrUnexpectedEOF, false, classClosed},
		{errors.New("something"), false, classOther},
	}
	for _, tt := range tests {
		if got := ErrorClass(tt.err, tt.tlsFailed); got != tt.want {
			t.Errorf("ErrorClass(%v, %v) = %q, want %q", tt.err, tt.tlsFailed, got, tt.want)
		}
	}
}
