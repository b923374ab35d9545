package ros1

import (
	"net/http"
	"strconv"
	"time"

	"github.com/bluenviron/goroslib/v2/pkg/apimaster"
)

func itoa(i int) string { return strconv.Itoa(i) }

func newMasterClient(hostport, name string) *apimaster.Client {
	return apimaster.NewClient(hostport, name, &http.Client{Timeout: 5 * time.Second})
}
