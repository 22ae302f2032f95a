// Package serialno writes ringflake IDs as business serial numbers — a
// fixed prefix, the ID's time readable in UTC, its node and its sequence,
// like the payment and order numbers that payment systems print — and
// reads them back to the IDs:
//
//	f, err := serialno.New("PAY{time:20060102150405.000}{node:4}{seq:4}", ringflake.TwitterLayout())
//	s, err := f.Format(id) // "PAY20220628160740.105" + "0378" + "0000"
//	id, err = f.Parse(s)
//
// A serial number is the ID in another spelling, so it is as unique as
// the ID and sorts like it. The package needs only the root package's
// public [ringflake.Layout]; the root package does not import it.
package serialno
