package mail

import (
	"errors"

	gomail "github.com/wneessen/go-mail"
)

// permanent reports whether the server refused the message for good (a 5xx
// reply to the sender, a recipient or the data): retrying cannot help.
func permanent(err error) bool {
	var se *gomail.SendError
	return errors.As(err, &se) && !se.IsTemp()
}
