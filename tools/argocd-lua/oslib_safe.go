package main

// The "safe" os module of util/lua/oslib_safe.go (argo-cd v3.5.1): time and date only.
//
// Argo CD opens it with l.RegisterModule(lua.TabLibName, osFuncs), the *table* library's
// name: table is loaded by then, so RegisterModule returns it unchanged and no global os
// appears. Without useOpenLibs a check reaches these functions only through require("os")
// (the preloaded loader); with useOpenLibs, os is gopher-lua's full os library.

import (
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

var safeOsFuncs = map[string]lua.LGFunction{
	"time": safeOsTime,
	"date": safeOsDate,
}

func openSafeOs(l *lua.LState) int {
	l.Push(l.RegisterModule(lua.TabLibName, safeOsFuncs))
	return 1
}

func safeOsLoader(l *lua.LState) int {
	l.Push(l.SetFuncs(l.NewTable(), safeOsFuncs))
	return 1
}

// safeOsTime: the current time, or a date table read as local time (isdst read and unused;
// a missing hour is 12, a missing day, month or year -1).
func safeOsTime(l *lua.LState) int {
	if l.GetTop() == 0 {
		l.Push(lua.LNumber(time.Now().Unix()))
		return 1
	}
	tbl := l.CheckTable(1)
	field := func(name string, fallback int) int {
		if n, ok := tbl.RawGetString(name).(lua.LNumber); ok {
			return int(n)
		}
		return fallback
	}
	t := time.Date(field("year", -1), time.Month(field("month", -1)), field("day", -1),
		field("hour", 12), field("min", 0), field("sec", 0), 0, time.Local)
	l.Push(lua.LNumber(t.Unix()))
	return 1
}

// safeOsDate: "!" for UTC, an optional time, "*t" for a table (yday 0, isdst false),
// else the format's %-flags.
func safeOsDate(l *lua.LState) int {
	t := time.Now()
	format := "%c"
	if l.GetTop() >= 1 {
		format = l.CheckString(1)
		if strings.HasPrefix(format, "!") {
			t = time.Now().UTC()
			format = strings.TrimLeft(format, "!")
		}
		if l.GetTop() >= 2 {
			// As in Argo CD: an explicit time is local, even after "!".
			t = time.Unix(l.CheckInt64(2), 0)
		}
		if strings.HasPrefix(format, "*t") {
			ret := l.NewTable()
			ret.RawSetString("year", lua.LNumber(t.Year()))
			ret.RawSetString("month", lua.LNumber(t.Month()))
			ret.RawSetString("day", lua.LNumber(t.Day()))
			ret.RawSetString("hour", lua.LNumber(t.Hour()))
			ret.RawSetString("min", lua.LNumber(t.Minute()))
			ret.RawSetString("sec", lua.LNumber(t.Second()))
			ret.RawSetString("wday", lua.LNumber(t.Weekday()+1))
			ret.RawSetString("yday", lua.LNumber(0))
			ret.RawSetString("isdst", lua.LFalse)
			l.Push(ret)
			return 1
		}
	}
	l.Push(lua.LString(formatDate(t, format)))
	return 1
}

// Go layouts of the flags oslib_safe.go knows (its %a is the literal "mon").
var dateLayouts = map[byte]string{
	'a': "mon", 'A': "Monday", 'b': "Jan", 'B': "January", 'c': "02 Jan 06 15:04 MST", 'd': "02",
	'F': "2006-01-02", 'H': "15", 'I': "03", 'm': "01", 'M': "04", 'p': "PM", 'P': "pm", 'S': "05",
	'x': "15/04/05", 'X': "15:04:05", 'y': "06", 'Y': "2006", 'z': "-0700", 'Z': "MST",
}

// formatDate expands the format as oslib_safe.go's strftime and flag scanner do: "%%" is
// "%", a known flag its layout, %w the weekday number, an unknown flag kept as written, and a
// "%" that ends the format kept.
func formatDate(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i == len(format)-1 {
			b.WriteByte(c)
			continue
		}
		if format[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		i++
		flag := format[i]
		if layout, ok := dateLayouts[flag]; ok {
			b.WriteString(t.Format(layout))
		} else if flag == 'w' {
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		} else {
			b.WriteByte('%')
			b.WriteByte(flag)
		}
	}
	return b.String()
}
