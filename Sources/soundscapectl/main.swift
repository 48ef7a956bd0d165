print("soundscapectl")
