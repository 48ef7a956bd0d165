import CPipeWire
import COpusFile
import CSoundscapeShims
func _probe() { pw_init(nil, nil) }
