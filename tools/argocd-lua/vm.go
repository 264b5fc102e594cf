package main

// The virtual machine of util/lua/lua.go (argo-cd v3.5.1), step by step.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	lua "github.com/yuin/gopher-lua"
	luajson "layeh.com/gopher-json"
)

// healthStatus is gitops-engine pkg/health HealthStatus.
type healthStatus struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
}

// runLua is VM.runLuaWithResourceActionParameters with no action parameters: the caller
// reads the script's result from the returned state and closes it.
func runLua(obj map[string]any, script string, useOpenLibs bool) (*lua.LState, error) {
	// lua.NewState(lua.Options{SkipOpenLibs: !vm.UseOpenLibs}): with useOpenLibs every
	// library of gopher-lua (io, os, string, math, debug, channel, coroutine included).
	l := lua.NewState(lua.Options{SkipOpenLibs: !useOpenLibs})
	// Then, either way, package, base, table and "OpenSafeOs", each called with its name.
	for _, pair := range []struct {
		n string
		f lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.OsLibName, openSafeOs},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(pair.f), NRet: 0, Protect: true}, lua.LString(pair.n)); err != nil {
			panic(err)
		}
	}
	// require("os") finds the safe module when no os module is loaded yet.
	l.PreloadModule(lua.OsLibName, safeOsLoader)

	ctx, cancel := context.WithTimeout(context.Background(), 1*time.Second)
	defer cancel()
	l.SetContext(ctx)

	// No action parameters for a health check: an empty table.
	l.SetGlobal("actionParams", l.CreateTable(0, 0))
	l.SetGlobal("obj", decodeValue(l, obj))
	err := l.DoString(script)

	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) {
		if apiErr.Type == lua.ApiErrorRun {
			apiErr.StackTrace = ""
			err = apiErr
		}
	}
	return l, err
}

// decodeValue is util/lua decodeValue: JSON values to Lua values. A nil inside a list is
// appended as LNil, which LTable.Append drops: null items vanish and the rest close up.
func decodeValue(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case json.Number:
		return lua.LString(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case []any:
		arr := l.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(decodeValue(l, item))
		}
		return arr
	case map[string]any:
		tbl := l.CreateTable(0, len(v))
		for key, item := range v {
			tbl.RawSetH(lua.LString(key), decodeValue(l, item))
		}
		return tbl
	}
	return lua.LNil
}

// executeHealthLua is VM.ExecuteHealthLua: the value left on top of the stack, a table
// encoded with gopher-json and decoded into a HealthStatus.
func executeHealthLua(obj map[string]any, script string, useOpenLibs bool) (*healthStatus, error) {
	l, err := runLua(obj, script, useOpenLibs)
	// lua.go closes the state with a defer inside runLua and reads it afterwards; Close
	// only marks it dead, so reading before or after closing gives the same values.
	defer l.Close()
	if err != nil {
		return nil, err
	}
	ret := l.Get(-1)
	switch ret.Type() {
	case lua.LTTable:
		raw, err := luajson.Encode(ret)
		if err != nil {
			return nil, err
		}
		hs := &healthStatus{}
		if err := json.Unmarshal(raw, hs); err != nil {
			// lua.go means an empty table (encoded as []), but its errors.As matches every
			// UnmarshalTypeError ({status = 5} too): each gives an empty status.
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) {
				return &healthStatus{}, nil
			}
			return nil, err
		}
		switch hs.Status {
		case "Unknown", "Progressing", "Suspended", "Healthy", "Degraded", "Missing":
			return hs, nil
		}
		return &healthStatus{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
	case lua.LTNil:
		return &healthStatus{}, nil
	}
	return nil, fmt.Errorf("expect %s output from Lua script, not %s", "table", ret.Type().String())
}
