print("soundscaped")
