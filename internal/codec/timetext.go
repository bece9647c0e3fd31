package codec

import "time"

// sameTimeText reports whether s is the text t.AppendFormat(b,
// time.RFC3339Nano) makes of t, as the encoder writes a time. For a time in
// UTC of years 0–9999 (the usual case: what Decode and CopyDecoded make) it
// reads s instead of formatting t: s must then be the one spelling that
// format gives — fixed-width fields in range, a fraction of 1 to 9 digits
// without a trailing zero and none for a whole second, "Z" — of t's second
// and nanosecond; any other time is formatted and compared.
func sameTimeText(t time.Time, s string) bool {
	if t.Location() == time.UTC {
		if u := t.Unix(); u >= minRFC3339Unix && u <= maxRFC3339Unix {
			return readsAsUTC(s, u, t.Nanosecond())
		}
	}
	var buf [64]byte
	return string(t.AppendFormat(buf[:0], time.RFC3339Nano)) == s
}

// readsAsUTC reports whether s is "YYYY-MM-DDTHH:MM:SS[.F]Z" as
// RFC3339Nano formats the time sec.nsec (Unix seconds, nanoseconds) in UTC.
func readsAsUTC(s string, sec int64, nsec int) bool {
	n := len(s)
	if n < 20 || n == 21 || n > 30 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[n-1] != 'Z' {
		return false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	second, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour > 23 || minute > 59 || second > 59 {
		return false
	}
	frac := 0
	if n > 20 {
		f := s[20 : n-1] // 1 to 9 digits
		if s[19] != '.' || f[len(f)-1] == '0' {
			return false
		}
		v, ok := digits(f)
		if !ok {
			return false
		}
		for range 9 - len(f) {
			v *= 10
		}
		frac = v
	}
	return frac == nsec && unixOf(year, month, day)+int64(hour*3600+minute*60+second) == sec
}

// digits is the value of the decimal digits s (at most 9), false when s
// holds anything else.
func digits(s string) (int, bool) {
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		v = v*10 + int(c)
	}
	return v, true
}

// daysIn is the number of days of month in year (proleptic Gregorian).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// unixOf is the Unix time of midnight UTC starting the date, for years
// 0–9999 (days from the civil date, counted in 400-year eras from March).
func unixOf(year, month, day int) int64 {
	y := year + 400 // ≥ 0 below, so that division floors
	if month <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	doy := (153*((month+9)%12)+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return (int64(era)*146097 + int64(doe) - 719468 - 146097) * 86400
}
