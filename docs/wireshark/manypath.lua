-- Wireshark dissector for the NDP and Homa headers manypath writes into its packet
-- captures (UDP ports 61000 and 61001; the layout is in docs/traces.md).
-- Use: wireshark -X lua_script:docs/wireshark/manypath.lua capture.pcapng
--      (or copy it into Wireshark's personal plugins folder).

local function shim(name, port, kinds, flag_text)
    -- "ndp" is taken (Nortel Discovery Protocol): the protocols are manypath_ndp and
    -- manypath_homa, their fields manypath_ndp.seq and so on.
    name = "manypath_" .. name
    local p = Proto(name, name .. " header")
    local f = {
        kind = ProtoField.uint8(name .. ".type", "Type", base.DEC, kinds),
        flags = ProtoField.uint8(name .. ".flags", flag_text, base.HEX),
        conn = ProtoField.uint32(name .. ".conn", "Connection", base.DEC),
        seq = ProtoField.uint64(name .. ".seq", "Sequence", base.DEC),
        ack = ProtoField.uint64(name .. ".ack", "Acknowledgment", base.DEC),
        len = ProtoField.uint32(name .. ".payload", "Payload length", base.DEC),
    }
    p.fields = { f.kind, f.flags, f.conn, f.seq, f.ack, f.len }
    function p.dissector(buf, pinfo, tree)
        if buf:len() < 32 or buf(0, 1):uint() ~= 0x6D then return 0 end
        pinfo.cols.protocol = name:sub(10):upper()
        local t = tree:add(p, buf(0, 32))
        t:add(f.kind, buf(1, 1))
        t:add(f.flags, buf(2, 1))
        t:add(f.conn, buf(4, 4))
        t:add(f.seq, buf(8, 8))
        t:add(f.ack, buf(16, 8))
        t:add(f.len, buf(24, 4))
        local kind = kinds[buf(1, 1):uint()] or "?"
        pinfo.cols.info = string.format("%s conn=%d seq=%s len=%d", kind, buf(4, 4):uint(),
            tostring(buf(8, 8):uint64()), buf(24, 4):uint())
        return 32
    end
    DissectorTable.get("udp.port"):add(port, p)
end

shim("ndp", 61000, { [0] = "data", [1] = "ACK", [2] = "NACK", [3] = "PULL" },
    "Flags (0x01 trimmed, 0x02 returned, 0x04 carries a PULL)")
shim("homa", 61001, { [0] = "DATA", [1] = "GRANT", [2] = "RESEND" }, "Priority")
